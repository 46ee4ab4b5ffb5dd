// The demo's size per unit of --scale, by collection (in write order): small and free of imports,
// so the CLI's help can say it without loading the generator.
export const DEMO_PER_UNIT = { clientas: 200, citas: 1000, llamadas: 500 } as const;

export type DemoCounts = Record<keyof typeof DEMO_PER_UNIT, number>;

/** "200 clientas, 1000 citas, 500 llamadas" */
export function countsText(counts: DemoCounts): string {
  return Object.entries(counts)
    .map(([name, n]) => `${n} ${name}`)
    .join(', ');
}
