// Loaded: the load states of one read (useLoad / useResource) around what shows its data: the error
// in words, "Loading…" until the first answer, then the children (which read the data themselves and
// also render after an error, e.g. an empty table under the message). A reload keeps the last data on
// screen instead of blinking back to "Loading…".
import type { ComponentChildren } from 'preact';
import { ErrorBox, Loading } from './feedback.tsx';

export function Loaded(props: {
  of: { data: unknown; error: unknown; loading: boolean };
  children: ComponentChildren;
}) {
  const { data, error, loading } = props.of;
  return (
    <>
      <ErrorBox error={error} />
      {loading && data === undefined ? <Loading /> : props.children}
    </>
  );
}
