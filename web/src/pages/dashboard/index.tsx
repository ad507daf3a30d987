// Placeholder page of the dashboard area (replace with the real page).
import { ComingSoon } from '../coming-soon.tsx';

export default function Page() {
  return <ComingSoon title="Dashboard" />;
}
