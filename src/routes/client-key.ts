/**
 * The key a client is counted under by the per-client limits (ARCHITECTURE.md §11 "Hostile
 * clients"): `limits.max_concurrent_per_client` and `limits.max_refused_payments_per_minute`.
 *
 * An IPv4 client is its address. An IPv6 client is its network of `limits.client_ipv6_prefix`
 * bits (64 by default): a subscriber is given at least a /64 (RFC 6177) and may send from any of
 * its 2^64 addresses, so counting addresses would give one client as many budgets as it likes. An
 * IPv4 address written as IPv6 (`::ffff:192.0.2.1`, as a dual-stack socket reports it) is the IPv4
 * client, and so is one behind a translator that uses the well-known prefix `64:ff9b::/96` (RFC
 * 6052 §2.1; an IPv4 client reaching an IPv6-only server through SIIT or NAT46 arrives as
 * `64:ff9b::192.0.2.1`): that prefix holds every IPv4 address, and counting it as one /64 would
 * make all of them one client. A port or zone a proxy adds (`[2001:db8::1]:443`, `192.0.2.1:5678`,
 * `fe80::1%eth0`) is not part of the client. Anything else (a name a proxy wrote instead of an
 * address) is its own key.
 */
import { isIPv4, isIPv6 } from "node:net";

export function clientKey(address: string, ipv6Prefix: number): string {
  const host = withoutPort(address.trim());
  if (isIPv4(host)) return host;
  const unzoned = host.replace(/%.*$/, "");
  if (!isIPv6(unzoned)) return address;
  const groups = ipv6Groups(unzoned);
  if (isMappedIPv4(groups) || isTranslatedIPv4(groups)) return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  const masked = groups.map((group, index) => {
    const bitsKept = Math.min(16, Math.max(0, ipv6Prefix - index * 16));
    return group & (0xffff << (16 - bitsKept)) & 0xffff;
  });
  return `${masked.map((group) => group.toString(16)).join(":")}/${ipv6Prefix}`;
}

/** `[v6]:port` → v6, `v4:port` → v4; a bare IPv6 address (several colons) is left as it is. */
function withoutPort(host: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed !== null) return bracketed[1]!;
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(host);
  return v4WithPort === null ? host : v4WithPort[1]!;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 read as two groups). */
function ipv6Groups(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = dotted === null ? address : address.slice(0, dotted.index) + "0:0";
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const parse = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const first = parse(head);
  const last = parse(tail);
  const groups = tail === undefined ? first : [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    groups[6] = (a << 8) | b;
    groups[7] = (c << 8) | d;
  }
  return groups;
}

/** `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2): an IPv4 client on a dual-stack socket. */
function isMappedIPv4(groups: number[]): boolean {
  return groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
}

/** `64:ff9b::a.b.c.d` (RFC 6052 §2.1, the well-known prefix, IPv4 in the last 32 bits): an IPv4 client through a translator. */
function isTranslatedIPv4(groups: number[]): boolean {
  return groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
}
