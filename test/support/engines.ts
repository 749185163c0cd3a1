// The three browser engines the suite runs in, and which of them a run asks for (BROWSERS=chromium,firefox).

/** A browser engine the suite drives. */
export type EngineName = 'chromium' | 'firefox' | 'webkit';

/** Every engine, in the order runs go through them. */
export const ENGINES: readonly EngineName[] = ['chromium', 'firefox', 'webkit'];

/** Parse a comma-separated engine list (`all` or empty: every engine); unknown names throw. */
export function parseEngines(value: string | undefined): EngineName[] {
  const names = (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0 || names.includes('all')) return [...ENGINES];
  const unknown = names.filter((n) => !(ENGINES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`unknown browser engine(s) ${unknown.join(', ')}: use ${ENGINES.join(', ')} or all`);
  return ENGINES.filter((e) => names.includes(e));
}

/** The engines this run covers: `BROWSERS` narrows it, every engine by default. */
export function selectedEngines(): EngineName[] {
  return parseEngines(process.env.BROWSERS);
}
