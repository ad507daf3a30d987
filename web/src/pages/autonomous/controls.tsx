// The control bar of one workflow: pause, resume, stop, retry, done, resume with feedback (when
// waiting), verification override (when paused by its acceptance verification), extend the planning
// timeout (planning / planning_timeout) and delete. Which buttons show follows the status
// (model.ts controlsFor); the API stays the judge: a refusal (409 with the transition table's reason)
// is shown in words under the bar. Stop, done, delete and the override ask first.

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../../api/client.ts';
import { ConfirmPrompt } from '../../ui/confirm.tsx';
import { Button, ErrorBox, Field } from '../../ui/index.ts';
import { TextareaField } from '../../ui/textarea-field.tsx';
import { CONFIRM, type ControlName, controlPath, controlsFor, type Workflow } from './model.ts';

const LABEL: Record<ControlName, string> = {
  pause: 'Pause',
  resume: 'Resume',
  stop: 'Stop',
  retry: 'Retry',
  done: 'Mark done',
  feedback: 'Send feedback',
  verification_override: 'Override verification',
  extend: 'Extend planning timeout',
  delete: 'Delete',
};

export function ControlBar({ workflow, onChanged }: { workflow: Workflow; onChanged: () => void }) {
  const { route } = useLocation();
  const [busy, setBusy] = useState<ControlName | null>(null);
  const [asking, setAsking] = useState<ControlName | null>(null);
  const [error, setError] = useState<{ control: ControlName; err: unknown } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [feedback, setFeedback] = useState('');
  const [note, setNote] = useState('');
  const [seconds, setSeconds] = useState('');
  const id = workflow.id;
  const shown = controlsFor(workflow);

  async function act(c: ControlName) {
    setBusy(c);
    setError(null);
    setDone(null);
    try {
      const base = `/api/autonomous/workflows/${encodeURIComponent(id)}`;
      if (c === 'delete') {
        await api.del(base);
        route('/autonomous');
        return;
      }
      if (c === 'feedback') await api.post(`${base}/resume-with-feedback`, { feedback });
      else if (c === 'verification_override')
        await api.post(`${base}/verification_override`, note.trim() ? { note: note.trim() } : {});
      else if (c === 'extend')
        await api.post(`${base}/extend-planning-timeout`, seconds.trim() ? { seconds: Number(seconds) } : {});
      else await api.post(controlPath(id, c));
      setDone(`${LABEL[c]}: accepted.`);
      if (c === 'feedback') setFeedback('');
      setAsking((a) => (a === c ? null : a));
      onChanged();
    } catch (err) {
      setError({ control: c, err });
      setAsking((a) => (a === c ? null : a));
    } finally {
      setBusy(null);
    }
  }

  const click = (c: ControlName) => (CONFIRM[c] ? setAsking(c) : act(c));
  const simple = shown.filter((c) => c !== 'feedback' && c !== 'verification_override' && c !== 'extend');

  return (
    <section class="aw-panel" aria-label="Controls">
      <div class="aw-controls">
        {simple.map((c) => (
          <Button
            key={c}
            variant={
              c === 'stop' || c === 'delete'
                ? 'danger'
                : c === 'resume' || c === 'retry'
                  ? 'primary'
                  : 'secondary'
            }
            busy={busy === c}
            disabled={busy !== null && busy !== c}
            onClick={() => click(c)}
          >
            {LABEL[c]}
          </Button>
        ))}
      </div>
      {asking && (
        <ConfirmPrompt
          cancelLabel="Keep it"
          question={CONFIRM[asking]!}
          confirmLabel={`Yes, ${LABEL[asking].toLowerCase()}`}
          busy={busy === asking}
          onConfirm={() => act(asking)}
          onCancel={() => setAsking(null)}
        />
      )}
      {shown.includes('feedback') && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            act('feedback');
          }}
        >
          <TextareaField
            label="Feedback for the agent"
            value={feedback}
            onValue={setFeedback}
            rows={3}
            maxLength={20_000}
            hint="The workflow is waiting: your feedback is stored as a milestone and the round starts again."
          />
          <Button type="submit" variant="primary" busy={busy === 'feedback'} disabled={!feedback.trim()}>
            {LABEL.feedback}
          </Button>
        </form>
      )}
      {shown.includes('verification_override') && (
        <div>
          <TextareaField
            label="Override note (optional)"
            value={note}
            onValue={setNote}
            rows={2}
            maxLength={2000}
          />
          <Button busy={busy === 'verification_override'} onClick={() => click('verification_override')}>
            {LABEL.verification_override}
          </Button>
        </div>
      )}
      {shown.includes('extend') && (
        <form
          class="aw-controls"
          onSubmit={(e) => {
            e.preventDefault();
            act('extend');
          }}
        >
          <Field
            label="Extend by (seconds)"
            type="number"
            min={60}
            max={86_400}
            value={seconds}
            onValue={setSeconds}
            hint="60 to 86,400; empty for the default."
          />
          <Button type="submit" busy={busy === 'extend'}>
            {LABEL.extend}
          </Button>
        </form>
      )}
      {done && (
        <p class="muted" role="status">
          {done}
        </p>
      )}
      {error && (
        <ErrorBox
          title={
            error.err instanceof ApiError && error.err.status === 409
              ? `${LABEL[error.control]} refused`
              : `${LABEL[error.control]} failed`
          }
          error={error.err}
        />
      )}
    </section>
  );
}
