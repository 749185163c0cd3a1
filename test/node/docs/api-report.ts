// The API report of each package entry (etc/<name>.api.md, API Extractor): the public surface as one reviewable
// file, so a change to it is a visible diff. `npm run api` rewrites the reports; `check` (the test) says which
// entries' surfaces differ from their committed report, writing nothing under etc/.
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Extractor, ExtractorConfig, type ExtractorMessage } from '@microsoft/api-extractor';
import { repo } from './markdown.ts';

/** Each entry of package.json's `exports`: its report's name and its declaration file under the types folder. */
export const ENTRIES = [
  { report: 'opa-sync', dts: 'src/index.d.ts' },
  { report: 'opa-sync-worker', dts: 'worker/index.d.ts' },
  { report: 'opa-sync-sw', dts: 'worker/sw.d.ts' },
] as const;

/** One entry's outcome: whether its surface differs from the committed report, and what API Extractor said. */
export interface ReportResult {
  report: string;
  changed: boolean;
  succeeded: boolean;
  messages: string[];
}

/** Build the declarations afresh (as `npm run build` does) and run API Extractor on every entry. */
export async function apiReports(write: boolean): Promise<ReportResult[]> {
  // Inside the project (git-ignored /tmp/), not node_modules: API Extractor takes files under node_modules for
  // another package's and would not follow the entries' `export *`.
  const types = join(repo, 'tmp/api-types');
  await rm(types, { recursive: true, force: true });
  try {
    const tsc = join(repo, 'node_modules/typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--declarationDir', types], { cwd: repo });
    const results: ReportResult[] = [];
    for (const entry of ENTRIES) {
      const configFile = join(repo, 'api-extractor.json');
      const configObject = ExtractorConfig.loadFile(configFile);
      configObject.mainEntryPointFilePath = join(types, entry.dts);
      configObject.apiReport = { ...configObject.apiReport!, enabled: true, reportFileName: entry.report };
      const config = ExtractorConfig.prepare({ configObject, configObjectFullPath: configFile, packageJsonFullPath: join(repo, 'package.json') });
      const messages: string[] = [];
      const result = Extractor.invoke(config, {
        localBuild: write,
        messageCallback: (message: ExtractorMessage) => {
          if (message.logLevel === 'error' || message.logLevel === 'warning') messages.push(message.formatMessageWithoutLocation());
          message.handled = true;
        },
      });
      results.push({ report: entry.report, changed: result.apiReportChanged, succeeded: result.succeeded, messages });
    }
    return results;
  } finally {
    await rm(types, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!) && process.argv.includes('--write')) {
  const results = await apiReports(true);
  for (const r of results) console.log(`etc/${r.report}.api.md ${r.changed ? 'updated' : 'unchanged'}${r.messages.length ? `: ${r.messages.join('; ')}` : ''}`);
}
