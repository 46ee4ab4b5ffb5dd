import autocannon from 'autocannon';
const [url, key, etag, secs] = process.argv.slice(2);
const r = await autocannon({ url, connections: 20, duration: Number(secs), headers: { authorization: `Bearer ${key}`, 'if-none-match': etag } });
console.log(Math.round(r.requests.average), 'req/s', JSON.stringify(r.statusCodeStats), 'total', r.requests.total);
