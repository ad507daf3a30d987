// The placeholder every area shows until its pages land.
export function ComingSoon({ title }: { title: string }) {
  return (
    <section>
      <h1>{title}</h1>
      <p class="muted">Coming soon.</p>
    </section>
  );
}
