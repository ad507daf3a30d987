// Reported to the server at registration and in every heartbeat.
export const AGENT_VERSION = '0.1.0';
