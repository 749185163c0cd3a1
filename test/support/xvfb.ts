// A virtual X display for WebKitGTK's MiniBrowser, which has no headless mode.
import type { ChildProcess } from 'node:child_process';
import { spawnGroup, stopGroup } from './processes.ts';

/** A running Xvfb. */
export interface Display {
  /** The value for `DISPLAY`, e.g. `:99`. */
  display: string;
  close(): Promise<void>;
}

/** Start Xvfb on a free display (it picks one and tells us through `-displayfd`). */
export async function startXvfb(xvfbPath: string, timeoutMs = 10_000): Promise<Display> {
  const child: ChildProcess = spawnGroup(xvfbPath, ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  try {
    const number = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`Xvfb did not report a display within ${timeoutMs} ms`)), timeoutMs);
      const fd = child.stdio[3] as NodeJS.ReadableStream;
      fd.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve(out.trim());
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Xvfb exited with ${code}: ${stderr}`));
      });
    });
    return { display: `:${number}`, close: () => stopGroup(child) };
  } catch (error) {
    await stopGroup(child);
    throw error;
  }
}
