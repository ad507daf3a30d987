export function createProbeActivities() {
  return {
    async echo(message: string): Promise<string> {
      return `echo: ${message}`;
    },
  };
}
export type ProbeActivities = ReturnType<typeof createProbeActivities>;
