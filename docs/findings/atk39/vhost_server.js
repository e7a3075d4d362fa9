// a name-based virtual-host server (as a CDN edge or shared host): answers by Host header
const http = require('http');
http.createServer((req, res) => {
  const h = (req.headers.host || '').split(':')[0];
  const body = h === 'vhost.test' ? 'public site vhost.test\n' : 'OTHER SITE ' + h + ' method=' + req.method + ' (not on the list)\n';
  res.end(body);
}).listen(+process.argv[2] || 18080, '127.0.0.1');
