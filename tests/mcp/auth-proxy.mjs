// A header-injecting proxy for the conformance suite, which cannot send a bearer token:
// it forwards every request to the daemon with `Authorization: Bearer TOKEN` added and
// every other header (Host and Origin included) unchanged, streaming both directions.
// Usage: node auth-proxy.mjs LISTEN_PORT http://127.0.0.1:DAEMON_PORT TOKEN
import http from 'node:http';

const [, , listenPort, target, token] = process.argv;
const upstream = new URL(target);

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => forward.destroy());
  req.pipe(forward);
});
server.listen(Number(listenPort), '127.0.0.1', () => console.log(`auth-proxy listening on ${server.address().port}`));
