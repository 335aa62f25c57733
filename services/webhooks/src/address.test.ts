import { describe, expect, it } from 'vitest';
import { checkDestination, embeddedIPv4, forbiddenReason, parseAllowList, refusedUrl } from './address.js';

describe('endpoint URLs refused at add (SSRF)', () => {
  it.each([
    ['http://127.0.0.1:9/hook', 'loopback'],
    ['http://2130706433/hook', 'loopback'],
    ['http://0177.0.0.1/hook', 'loopback'],
    ['http://0x7f.0.0.1/hook', 'loopback'],
    ['http://127.1/hook', 'loopback'],
    ['http://localhost:8545/', 'loopback name'],
    ['http://api.localhost./', 'loopback name'],
    ['http://[2002:7f00:1::]/', 'loopback address (in IPv6 form)'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://[::1]:5432/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback address (in IPv6 form)'],
    ['http://[::ffff:a9fe:a9fe]/', 'link-local address (in IPv6 form)'],
    ['http://[::127.0.0.1]/', 'loopback address (in IPv6 form)'],
    ['http://[64:ff9b::10.0.0.1]/', 'private address (in IPv6 form)'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://10.1.2.3/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://100.64.0.1/', 'CGNAT'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://[fd00::1]/', 'private'],
    ['http://[fe80::1]/', 'link-local'],
    ['https://user:pass@hooks.example.com/in', 'credentials'],
    ['https://token@hooks.example.com/in', 'credentials'],
    ['ftp://hooks.example.com/in', 'only http:// and https://'],
  ])('refuses %s (%s)', (url, why) => {
    expect(refusedUrl(new URL(url))).toContain(why);
  });

  it.each([
    'https://hooks.example.com/in',
    'http://8.8.8.8/',
    'http://[2606:4700:4700::1111]/',
    'https://hooks.example.com:8443/a?b=c',
  ])('takes %s', (url) => {
    expect(refusedUrl(new URL(url))).toBeNull();
  });

  it('takes a forbidden address when its network is allowed, and nothing else', () => {
    const allow = parseAllowList('10.0.0.0/8, fd00::/8');
    expect(refusedUrl(new URL('http://10.1.2.3/'), allow)).toBeNull();
    expect(refusedUrl(new URL('http://[::ffff:10.1.2.3]/'), allow)).toBeNull();
    expect(refusedUrl(new URL('http://[fd00::1]/'), allow)).toBeNull();
    expect(refusedUrl(new URL('http://127.0.0.1/'), allow)).toContain('loopback');
    expect(() => parseAllowList('10.0.0.0/33')).toThrow(/prefix/);
    expect(() => parseAllowList('example.com')).toThrow(/not a network/);
  });

  it('finds the IPv4 address an IPv6 form carries', () => {
    expect(embeddedIPv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIPv4('64:ff9b::a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIPv4('2002:c0a8:101::1')).toBe('192.168.1.1');
    expect(embeddedIPv4('::1')).toBeUndefined();
    expect(forbiddenReason('2606:4700::1111')).toBeNull();
  });
});

describe('delivery destinations', () => {
  it('refuses a name when ANY of its addresses is forbidden, and names the first otherwise', async () => {
    const url = new URL('https://hooks.example.com/in');
    const both = await checkDestination(url, parseAllowList(''), async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ]);
    expect(both).toEqual({ ok: false, reason: 'refused: hooks.example.com resolves to a private address' });
    const fine = await checkDestination(url, parseAllowList(''), async () => [
      { address: '93.184.215.14', family: 4 },
    ]);
    expect(fine).toEqual({ ok: true, address: { address: '93.184.215.14', family: 4 } });
  });
});
