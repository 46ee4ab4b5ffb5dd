// The pure parts: back-off with full jitter, Retry-After, when to disable, the sealed secret.
import { describe, expect, it } from 'vitest';
import { backoffDelay, DISABLE_AFTER_MS, parseRetryAfter, RETRY_AFTER_CAP_MS, shouldDisable } from '../../src/services/webhooks/backoff.js';
import { generateWebhookSecret, openSecret, sealSecret } from '../../src/services/webhooks/secret.js';

const policy = { baseMs: 5_000, maxMs: 3_600_000 };

describe('back-off', () => {
  it('doubles the ceiling per attempt up to the maximum; full jitter spans [0, ceiling)', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(policy, n, null, 0.999999))).toEqual([4999, 9999, 19999, 39999]);
    expect(backoffDelay(policy, 1, null, 0)).toBe(0);
    expect(backoffDelay(policy, 12, null, 0.5)).toBe(1_800_000);
    expect(backoffDelay(policy, 5000, null, 0.999999)).toBe(3_599_996);
  });

  it('retries for at least 3 days: the sum of the longest waits before disabling is well over that many attempts', () => {
    // With a 1 h ceiling, 3 days hold at least 72 attempts after the ramp (each at most 1 h apart).
    let waited = 0;
    let attempts = 0;
    while (waited < DISABLE_AFTER_MS) waited += backoffDelay(policy, ++attempts, null, 0.999999) + 1;
    expect(attempts).toBeGreaterThan(72);
  });

  it('takes Retry-After as given, capped at an hour', () => {
    expect(backoffDelay(policy, 3, 7_000, 0.5)).toBe(7_000);
    expect(backoffDelay(policy, 3, 10 * 3_600_000, 0.5)).toBe(RETRY_AFTER_CAP_MS);
  });

  it('parses Retry-After: seconds, an HTTP date, nothing else', () => {
    const now = Date.UTC(2026, 2, 28, 12, 0, 0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sat, 28 Mar 2026 12:01:30 GMT', now)).toBe(90_000);
    expect(parseRetryAfter('Sat, 28 Mar 2026 11:00:00 GMT', now)).toBe(0);
    for (const bad of [undefined, '', '-5', '1.5', 'soon', '2026-03-28T12:01:00Z']) expect(parseRetryAfter(bad, now)).toBeNull();
  });

  it('disables once the head event has failed for 3 days', () => {
    expect(shouldDisable(null, 1e12)).toBe(false);
    expect(shouldDisable(1e12, 1e12 + DISABLE_AFTER_MS - 1)).toBe(false);
    expect(shouldDisable(1e12, 1e12 + DISABLE_AFTER_MS)).toBe(true);
  });
});

describe('the signing secret at rest', () => {
  const pepper = 'p'.repeat(40);
  it('is whsec_ and 24 random bytes; sealed, it holds nothing of it and opens only with the pepper and its endpoint', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
    expect(generateWebhookSecret()).not.toBe(secret);
    const sealed = sealSecret(pepper, 'ep-1', secret);
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(secret.slice(6));
    expect(sealed).not.toContain(Buffer.from(secret.slice(6), 'base64').toString('base64url'));
    expect(openSecret(pepper, 'ep-1', sealed)).toBe(secret);
    expect(() => openSecret('q'.repeat(40), 'ep-1', sealed)).toThrow();
    expect(() => openSecret(pepper, 'ep-2', sealed)).toThrow();
    expect(sealSecret(pepper, 'ep-1', secret)).not.toBe(sealed);
  });
});
