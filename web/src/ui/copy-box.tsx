// A labelled block of text (a command, a snippet, a secret shown once) with a Copy button; when the
// browser blocks the clipboard, the status says to select and copy by hand.
import { useState } from 'preact/hooks';
import { Button } from './button.tsx';

export function CopyBox({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied');
    } catch {
      setCopied('Copying is blocked here: select the text and copy it');
    }
  };
  return (
    <div>
      <strong>{label}</strong>
      <pre>{text}</pre>
      <div class="form-actions">
        <Button onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
          Copy
        </Button>
        <span role="status">{copied}</span>
      </div>
    </div>
  );
}
