/** Call a listener of the app's: one that throws is reported and never stops the others (nor the caller). */
export function notify<T>(listener: (value: T) => void, value: T): void {
  try {
    listener(value);
  } catch (error) {
    console.error('opa-sync: a listener threw', error);
  }
}
