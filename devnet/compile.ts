/**
 * Compiles the sandbox's Solidity sources with solc-js (standard JSON input) once per process.
 * The sources live next to this file; nothing is precompiled or checked in, so the bytecode the
 * chain runs is always the one the reader sees.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Abi, Hex } from "viem";

export interface CompiledContract {
  abi: Abi;
  /** Creation bytecode (constructor included). */
  bytecode: Hex;
  /** Runtime bytecode, for installing code at a fixed address (anvil_setCode). */
  deployedBytecode: Hex;
}

export interface CompiledSandbox {
  TestUSDC: CompiledContract;
  Multicall3: CompiledContract;
}

const SOURCES = ["TestUSDC.sol", "Multicall3.sol"] as const;

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

let compiled: Promise<CompiledSandbox> | undefined;

/** Compiles on first call; later calls share the same result. */
export function compileSandboxContracts(): Promise<CompiledSandbox> {
  compiled ??= compile();
  return compiled;
}

async function compile(): Promise<CompiledSandbox> {
  // solc is CommonJS and ships a large emscripten module; load it only when a sandbox starts.
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };
  const sources: Record<string, { content: string }> = {};
  for (const file of SOURCES) {
    sources[file] = { content: await Bun.file(join(import.meta.dir, file)).text() };
  }
  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // A hardfork every anvil release supports; newer defaults add nothing the token needs.
      evmVersion: "cancun",
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }
  return {
    TestUSDC: pick(output, "TestUSDC.sol", "TestUSDC"),
    Multicall3: pick(output, "Multicall3.sol", "Multicall3"),
  };
}

function pick(output: SolcOutput, file: string, name: string): CompiledContract {
  const contract = output.contracts?.[file]?.[name];
  if (!contract) throw new Error(`solc produced no contract ${name} in ${file}`);
  return {
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
  };
}
