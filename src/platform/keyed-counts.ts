/**
 * How many of something each key holds (an organization's face matches, an address's uploads),
 * keeping no entry for a key at zero, so a map of every organization or address ever seen does
 * not grow for the life of the process.
 */
export class KeyedCounts {
  private readonly counts = new Map<string, number>();

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: string): void {
    this.counts.set(key, this.get(key) + 1);
  }

  remove(key: string): void {
    const left = this.get(key) - 1;
    if (left <= 0) this.counts.delete(key);
    else this.counts.set(key, left);
  }
}
