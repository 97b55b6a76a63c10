import { Keyring } from '../platform/crypto/keyring.js';
import { NoKeyringError, type FieldProtection } from '../platform/crypto/fields.js';
import type { FileStore } from './store.js';

/**
 * Photos are personal data: every file is encrypted (AES-256-GCM under the active data key, the
 * file id bound to it) before it reaches the disk or the bucket, and decrypted when read, so the
 * file route serves the image itself and the store never holds, nor hands out, plain bytes. A
 * file written before encryption existed is read as it is.
 */
export class EncryptedFileStore implements FileStore {
  constructor(
    private readonly inner: FileStore,
    private readonly protection: FieldProtection,
  ) {}

  private keyring(): Keyring {
    const keyring = this.protection.keyring;
    if (!keyring) throw new NoKeyringError();
    return keyring;
  }

  async put(id: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.inner.put(id, this.keyring().encryptBytes(bytes, id), contentType);
  }

  async get(id: string): Promise<Buffer | undefined> {
    const stored = await this.inner.get(id);
    if (!stored || !Keyring.isEncryptedFile(stored)) return stored;
    return this.keyring().decryptBytes(stored, id);
  }

  /** The stored bytes as they are (re-encryption after a rotation reads them). */
  getStored(id: string): Promise<Buffer | undefined> {
    return this.inner.get(id);
  }

  /** Stored bytes written back as they are. */
  putStored(id: string, stored: Buffer, contentType: string): Promise<void> {
    return this.inner.put(id, stored, contentType);
  }

  delete(id: string): Promise<void> {
    return this.inner.delete(id);
  }

  /** A direct link to the bucket would serve ciphertext: Vouch serves the decrypted bytes itself. */
  async directUrl(): Promise<undefined> {
    return undefined;
  }
}
