/**
 * Cycle detection over an import graph (file → imported files), for the layer check.
 *
 *   echo '{"a.ts": ["b.ts"], "b.ts": ["a.ts"]}' | bun scripts/import-cycles.ts
 *     prints the graph's cycles as JSON (what findCycles returns); exit 1 if there is one
 */

/** Every cycle of the import graph, each reported once, starting from its smallest file name. */
export function findCycles(edges: Map<string, Set<string>>): string[][] {
  const cycles = new Map<string, string[]>();
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === "open") {
        const cycle = stack.slice(stack.indexOf(next));
        const start = cycle.indexOf([...cycle].sort()[0] ?? next);
        const canonical = [...cycle.slice(start), ...cycle.slice(0, start)];
        cycles.set(canonical.join(" "), [...canonical, canonical[0] ?? next]);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return [...cycles.values()];
}

if (import.meta.main) {
  const graph = JSON.parse(await new Response(Bun.stdin.stream()).text()) as Record<string, string[]>;
  const cycles = findCycles(
    new Map(Object.entries(graph).map(([file, imports]) => [file, new Set(imports)])),
  );
  process.stdout.write(`${JSON.stringify(cycles)}\n`);
  process.exit(cycles.length > 0 ? 1 : 0);
}
