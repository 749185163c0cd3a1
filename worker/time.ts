// Server timestamps: parsed strictly, compared as epoch ms, never taken from the device clock.

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Parse an ISO 8601 date-time to epoch ms; a timestamp without zone is read as UTC (not local time). */
export function parseTimestamp(value: string): number | undefined {
  const m = ISO.exec(value.trim());
  if (!m) return undefined;
  const zone = m[8] ? m[8].toUpperCase().replace(/^([+-]\d{2})(\d{2})$/, '$1:$2') : 'Z';
  const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${m[7] ? m[7].slice(0, 4).padEnd(4, '0') : ''}${zone}`;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Format epoch ms the way the Open Podcast API's examples do: UTC with milliseconds. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}
