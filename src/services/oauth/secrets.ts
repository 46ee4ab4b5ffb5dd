// The authorization server's own secrets, derived from the pepper (API_KEY_PEPPER) instead of
// generated and stored: every instance of a fleet derives the same ones with no coordination and
// nothing new to back up or encrypt, and rotating the pepper rotates them. Each is HKDF-SHA256 of
// the pepper with a label of its own, so none reveals the pepper or another.
//  - the cookie keys, which sign the provider's interaction cookies;
//  - the signing key (EC P-256), which the provider needs to run: it signs nothing we hand out
//    (access tokens are opaque and no ID tokens are issued), and only its public half is published.
import { createECDH, hkdfSync } from 'node:crypto';

function derive(pepper: string, label: string, bytes = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', pepper, 'clinic-api oauth', label, bytes));
}

export function cookieKeys(pepper: string): string[] {
  return [derive(pepper, 'cookie keys v1').toString('base64url')];
}

/** The P-256 signing key as a private JWK. */
export function signingJwk(pepper: string): { kty: 'EC'; crv: 'P-256'; d: string; x: string; y: string; kid: string } {
  // A scalar outside [1, n-1] (odds about 2^-32) is refused by setPrivateKey: try the next label.
  for (let i = 0; ; i++) {
    const d = derive(pepper, `signing key v1 ${i}`);
    try {
      const ecdh = createECDH('prime256v1');
      ecdh.setPrivateKey(d);
      const pub = ecdh.getPublicKey(); // 0x04 || x || y
      return {
        kty: 'EC',
        crv: 'P-256',
        d: d.toString('base64url'),
        x: pub.subarray(1, 33).toString('base64url'),
        y: pub.subarray(33, 65).toString('base64url'),
        kid: derive(pepper, 'signing key id v1', 12).toString('base64url'),
      };
    } catch {
      // next
    }
  }
}
