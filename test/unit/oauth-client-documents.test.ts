// The pure rules of client ID metadata documents: how long a document is kept, and which
// client_id URLs are accepted in form (the fetch itself: test/oauth/client-documents.test.ts).
import { describe, expect, it } from 'vitest';
import { checkClientIdUrl, DEFAULT_KEEP_S, keepSeconds, MAX_KEEP_S } from '../../src/services/oauth/client-documents.js';

const NOW = Date.parse('2026-11-29T10:00:00Z');

describe('keepSeconds', () => {
  it('follows Cache-Control, then Expires, else a default; never past a day', () => {
    expect(keepSeconds({ 'cache-control': 'public, max-age=120' }, NOW)).toBe(120);
    expect(keepSeconds({ 'cache-control': 'max-age=0' }, NOW)).toBe(0);
    expect(keepSeconds({ 'cache-control': 'no-store' }, NOW)).toBe(0);
    expect(keepSeconds({ 'cache-control': 'no-cache, max-age=600' }, NOW)).toBe(0);
    expect(keepSeconds({ 'cache-control': 'max-age=99999999' }, NOW)).toBe(MAX_KEEP_S);
    expect(keepSeconds({ expires: 'Sun, 29 Nov 2026 10:05:00 GMT' }, NOW)).toBe(300);
    expect(keepSeconds({ expires: 'Sun, 29 Nov 2026 09:00:00 GMT' }, NOW)).toBe(0);
    expect(keepSeconds({ expires: 'soon' }, NOW)).toBe(0);
    expect(keepSeconds({}, NOW)).toBe(DEFAULT_KEEP_S);
  });
});

describe('checkClientIdUrl', () => {
  it('takes an https URL with a path, in its normal form; http only with the try-out setting', () => {
    expect(checkClientIdUrl('https://app.example.com/client.json', false).host).toBe('app.example.com');
    expect(() => checkClientIdUrl('http://127.0.0.1:8080/client.json', false)).toThrow(/https:\/\/.*OAUTH_CLIENT_METADATA_ALLOW_PRIVATE/);
    expect(checkClientIdUrl('http://127.0.0.1:8080/client.json', true).port).toBe('8080');
    expect(() => checkClientIdUrl('https://app.example.com/', false)).toThrow(/must have a path/);
    expect(() => checkClientIdUrl('https://app.example.com/a/../client.json', false)).toThrow(/normal form/);
    expect(() => checkClientIdUrl('https://App.example.com/client.json', false)).toThrow(/normal form, https:\/\/app.example.com/);
    expect(() => checkClientIdUrl('https://u:p@app.example.com/client.json', false)).toThrow(/user name or password/);
    expect(() => checkClientIdUrl('https://app.example.com/client.json#x', false)).toThrow(/fragment/);
  });
});
