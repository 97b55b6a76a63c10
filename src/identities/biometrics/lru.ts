/** A bounded map that forgets the least recently used entry first. */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a whole number of at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key) as V;
    // A Map iterates in insertion order: re-inserting moves the key to the young end.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }
}

/**
 * An LruCache of values computed on demand: the first ask for a key computes it, asks that come
 * while it runs share that computation, and its result (null included) is kept; a computation
 * that fails is not kept, so the next ask tries again.
 */
export class ComputedLru<K, V> {
  private readonly done: LruCache<K, V>;
  private readonly computing = new Map<K, Promise<V>>();

  constructor(capacity: number) {
    this.done = new LruCache(capacity);
  }

  get(key: K, compute: () => Promise<V>): Promise<V> {
    if (this.done.has(key)) return Promise.resolve(this.done.get(key) as V);
    let pending = this.computing.get(key);
    if (!pending) {
      pending = compute()
        .then((value) => {
          this.done.set(key, value);
          return value;
        })
        .finally(() => this.computing.delete(key));
      this.computing.set(key, pending);
    }
    return pending;
  }
}
