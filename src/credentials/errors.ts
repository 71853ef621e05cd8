/**
 * A credential cannot be used: it does not exist, `CREDENTIALS_KEY` is missing or invalid, or
 * its stored value does not decrypt. The message names the credential and is safe to show to
 * the tenant: it never contains a secret.
 */
export class CredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CredentialError";
  }
}
