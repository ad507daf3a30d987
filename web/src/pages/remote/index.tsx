// Placeholder page of the remote area (replace with the real page).
import { ComingSoon } from '../coming-soon.tsx';

export default function Page() {
  return <ComingSoon title="Remote workspace" />;
}
