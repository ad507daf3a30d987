// Runs INSIDE the sandbox (plain Node, no dependencies, started by bubblewrap) as the sandbox's first
// process: with a port and socket it listens on that loopback port of the sandbox's own network
// namespace and bridges each connection to the model-proxy gate's Unix socket (bound in from outside);
// with `-` for both there is no network. Then it runs the real command as its child and ends with it.
//   node sandbox-bridge.mjs <port|-> <socket|-> <command> [args...]
// The child shares this process's group (signals sent to the group by the runner reach both), its
// stdio is this process's, and its exit code or signal becomes this process's. Signals sent to this
// process alone are passed on. bubblewrap is started with SIGTERM, SIGINT and SIGHUP ignored (so its
// monitor outlives a group SIGTERM until the command has ended); Node's spawn gives the command the
// default dispositions back.
import { spawn } from 'node:child_process';
import net from 'node:net';

const [port, socket, command, ...args] = process.argv.slice(2);
const server = net.createServer((inbound) => {
  const outbound = net.connect(socket);
  inbound.pipe(outbound).pipe(inbound);
  const close = () => {
    inbound.destroy();
    outbound.destroy();
  };
  inbound.on('error', close);
  outbound.on('error', close);
});
server.on('error', (err) => {
  process.stderr.write(`sandbox: the model-proxy bridge could not listen: ${err.message}\n`);
  process.exit(70);
});
const run = () => {
  const child = spawn(command, args, { stdio: 'inherit' });
  child.on('error', (err) => {
    process.stderr.write(`sandbox: could not start ${command}: ${err.message}\n`);
    process.exit(127);
  });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    server.close();
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
};
if (port === '-') run();
else server.listen(Number(port), '127.0.0.1', run);
