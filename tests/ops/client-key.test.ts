/**
 * What the per-client limits count a client by (routes/client-key.ts): an IPv4 address, or an IPv6
 * address's network of `limits.client_ipv6_prefix` bits, whatever way a socket or a proxy writes it.
 */
import { describe, expect, test } from "bun:test";
import { clientKey } from "../../src/routes/client-key.ts";

describe("client keys", () => {
  test.each<[string, number, string]>([
    ["192.0.2.1", 64, "192.0.2.1"],
    ["192.0.2.1:5678", 64, "192.0.2.1"],
    [" 192.0.2.1 ", 64, "192.0.2.1"],
    ["2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2:0:0:0:0/64"],
    ["2001:db8:1:2:ffff:ffff:ffff:ffff", 64, "2001:db8:1:2:0:0:0:0/64"],
    ["2001:DB8:1:2::9", 64, "2001:db8:1:2:0:0:0:0/64"],
    ["2001:db8::1", 64, "2001:db8:0:0:0:0:0:0/64"],
    ["[2001:db8::1]:443", 64, "2001:db8:0:0:0:0:0:0/64"],
    ["[2001:db8::1]", 64, "2001:db8:0:0:0:0:0:0/64"],
    ["fe80::1%eth0", 64, "fe80:0:0:0:0:0:0:0/64"],
    ["2001:db8:abcd:12ff::1", 48, "2001:db8:abcd:0:0:0:0:0/48"],
    ["2001:db8:abcd:12ff::1", 60, "2001:db8:abcd:12f0:0:0:0:0/60"],
    ["2001:db8:abcd:12ff::1", 128, "2001:db8:abcd:12ff:0:0:0:1/128"],
    ["::1", 64, "0:0:0:0:0:0:0:0/64"],
    // An IPv4 client on a dual-stack socket is the IPv4 client, however it is written.
    ["::ffff:192.0.2.1", 64, "192.0.2.1"],
    ["::ffff:c000:201", 64, "192.0.2.1"],
    ["[::ffff:192.0.2.1]:80", 128, "192.0.2.1"],
    // An IPv4 client through a translator with the well-known prefix (RFC 6052) is the IPv4 client.
    ["64:ff9b::192.0.2.1", 64, "192.0.2.1"],
    ["64:ff9b::c000:201", 128, "192.0.2.1"],
    ["[64:FF9B::198.51.100.7]:443", 64, "198.51.100.7"],
    // Not that prefix: an IPv6 network like any other (RFC 8215's local-use prefix embeds IPv4 where
    // its operator chose, which the address does not say).
    ["64:ff9b:1::192.0.2.1", 64, "64:ff9b:1:0:0:0:0:0/64"],
    ["64:ff9b:0:0:1::c000:201", 64, "64:ff9b:0:0:0:0:0:0/64"],
    // Not an address: its own key, as written.
    ["proxy.example", 64, "proxy.example"],
    ["unknown", 64, "unknown"],
    ["2001:db8::1::2", 64, "2001:db8::1::2"],
  ])("%s with a /%d prefix → %s", (address, prefix, key) => {
    expect(clientKey(address, prefix)).toBe(key);
  });

  test("two addresses of one /64 are one client; the neighbouring /64 is another", () => {
    const key = (address: string) => clientKey(address, 64);
    expect(key("2001:db8:0:1::a")).toBe(key("2001:db8:0:1:ffff::b"));
    expect(key("2001:db8:0:1::a")).not.toBe(key("2001:db8:0:2::a"));
    expect(clientKey("2001:db8:0:1::a", 128)).not.toBe(clientKey("2001:db8:0:1::b", 128));
  });

  test("IPv4 clients behind a translator are told apart, and each is the same client as without it", () => {
    const key = (address: string) => clientKey(address, 64);
    expect(key("64:ff9b::198.51.100.7")).not.toBe(key("64:ff9b::203.0.113.9"));
    expect(key("64:ff9b::198.51.100.7")).toBe(key("198.51.100.7"));
  });
});
