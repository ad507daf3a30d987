// What a new install's dashboard says to do next (issue 28 item 6), pure: the steps are shown while
// the service holds no usage at all, and each only to the roles that can take it (the API decides
// anyway): uploading or collecting usage with a personal upload token is for anyone who is not
// read-only; registering a machine (a registration token) is for system administrators; adding a
// provider key for whoever may open /manage/keys (auth/access.ts: administrators, tenant admins too).
import { isSystemAdmin, mayOpen, type Viewer } from '../../auth/access.ts';

export interface FirstRunStep {
  key: 'usage' | 'machine' | 'key';
  title: string;
  text: string;
  links: { href: string; label: string }[];
}

/** True while there is nothing to show: no token and no request has ever been recorded. */
export const isFirstRun = (s: { total_tokens: number; total_requests: number }) =>
  s.total_tokens === 0 && s.total_requests === 0;

export function firstRunSteps(viewer: Viewer): FirstRunStep[] {
  const steps: FirstRunStep[] = [];
  if (viewer.role !== 'readonly')
    steps.push({
      key: 'usage',
      title: 'Upload or collect usage',
      text: 'Create a personal upload token, then run the collector (npm run collect -- --upload-token …) or upload from your own tools.',
      links: [{ href: '/upload-tokens', label: 'Create an upload token' }],
    });
  if (isSystemAdmin(viewer))
    steps.push({
      key: 'machine',
      title: 'Register a machine',
      text: 'Create a registration token and run the agent install command on the machine; then start sessions on it from the remote workspace.',
      links: [
        { href: '/manage/machines', label: 'Register a machine' },
        { href: '/remote', label: 'Open the remote workspace' },
      ],
    });
  if (mayOpen(viewer, '/manage/keys'))
    steps.push({
      key: 'key',
      title: 'Add a provider key',
      text: 'Store a model provider key (write-only) so remote sessions and autonomous workflows can call the model.',
      links: [{ href: '/manage/keys', label: 'Add a provider key' }],
    });
  return steps;
}
