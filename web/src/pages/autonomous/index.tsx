// Placeholder page of the autonomous area (replace with the real page).
import { ComingSoon } from '../coming-soon.tsx';

export default function Page() {
  return <ComingSoon title="Autonomous development" />;
}
