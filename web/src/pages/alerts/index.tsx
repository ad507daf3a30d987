// Placeholder page of the alerts area (replace with the real page).
import { ComingSoon } from '../coming-soon.tsx';

export default function Page() {
  return <ComingSoon title="Alerts" />;
}
