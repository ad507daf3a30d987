// The browser terminal of a remote session (issue 14 item 6): xterm.js on the relay WebSocket
// /api/remote/sessions/:id/terminal (api/terminal-socket.ts). Keystrokes go as binary frames, output
// comes as binary frames, a fit to the panel sends {"type":"resize"}. Close 3010 {"owner"} means another
// API instance holds the relay: reconnect there (terminal-reconnect.ts decides). Nothing is stored:
// a reload starts a fresh terminal. This page is its own lazy chunk, so xterm never weighs on other pages.
// xterm's own <style> elements would break the strict CSP: csp-style-bridge.ts turns them into
// constructable stylesheets while the page is open.
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Button } from '../../ui/index.ts';
import { installCspStyleBridge } from './csp-style-bridge.ts';
import { decideOnClose, terminalUrl } from './terminal-reconnect.ts';
import './remote.css';

type Phase = 'connecting' | 'open' | 'closed';

export default function RemoteTerminalPage({ id }: { id: string }) {
  const host = useRef<HTMLDivElement>(null);
  const [phase, setPhase] = useState<Phase>('connecting');
  const [message, setMessage] = useState('');
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const uninstallBridge = installCspStyleBridge(document);
    const term = new Terminal({ cursorBlink: true, convertEol: false, fontSize: 14, scrollback: 5000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    try {
      fit.fit();
    } catch {}
    term.focus();
    const encoder = new TextEncoder();
    let ws: WebSocket | null = null;
    let disposed = false;
    let hops = 0;
    const size = () => ({ cols: term.cols, rows: term.rows });

    const connect = (url: string) => {
      setPhase('connecting');
      setMessage('');
      const sock = new WebSocket(url);
      sock.binaryType = 'arraybuffer';
      ws = sock;
      sock.onopen = () => {
        if (ws !== sock) return;
        setPhase('open');
        sock.send(JSON.stringify({ type: 'resize', ...size() }));
      };
      sock.onmessage = (ev) => {
        if (ev.data instanceof ArrayBuffer) term.write(new Uint8Array(ev.data));
      };
      sock.onclose = (ev) => {
        if (disposed || ws !== sock) return;
        const next = decideOnClose(ev.code, ev.reason, id, hops, size());
        if (next.action === 'reconnect') {
          hops += 1;
          connect(next.url);
          return;
        }
        setPhase('closed');
        setMessage(next.message);
      };
    };
    connect(terminalUrl(window.location.origin, id, size()));

    const typed = term.onData((data) => {
      if (ws?.readyState === WebSocket.OPEN) ws.send(encoder.encode(data));
    });
    const resized = term.onResize(({ cols, rows }) => {
      if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols, rows }));
    });
    const observer = new ResizeObserver(() => {
      try {
        fit.fit();
      } catch {}
    });
    observer.observe(el);
    return () => {
      disposed = true;
      observer.disconnect();
      typed.dispose();
      resized.dispose();
      ws?.close(1000);
      term.dispose();
      uninstallBridge();
    };
  }, [id, attempt]);

  const label =
    phase === 'open' ? 'Connected' : phase === 'connecting' ? 'Connecting…' : message || 'Disconnected';
  return (
    <section class="remote-terminal-page">
      <p>
        <a href={`/remote/sessions/${encodeURIComponent(id)}`}>Back to the session</a>
      </p>
      <h1>Terminal</h1>
      <p role="status" class="remote-terminal-status" data-phase={phase}>
        {label}
        {phase === 'closed' && (
          <>
            {' '}
            <Button onClick={() => setAttempt((a) => a + 1)}>Reconnect</Button>
          </>
        )}
      </p>
      <div class="remote-terminal" ref={host} />
      <p class="muted">Nothing typed or shown here is stored; a reload starts a new terminal.</p>
    </section>
  );
}
