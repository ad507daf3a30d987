// The user/prompt text of a model-proxy request body (issue 11 item 1: only the text the caller
// sends as user input or prompt is checked by the content filter, never system prompts, tool
// definitions or earlier assistant turns). Pure: takes the parsed JSON body of the formats the proxy
// forwards and returns the text joined by newlines ('' when the body carries none).
//   OpenAI chat completions   messages[role=user].content (string, or parts {type: 'text', text})
//   OpenAI completions        prompt (string or array of strings)
//   OpenAI responses          input (string, or items with role user and content string / parts)
//   Anthropic messages        messages[role=user].content (string, or blocks {type: 'text', text})
//   Gemini generateContent    contents[role=user or no role].parts[].text
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Text of a message content: a string, or an array of parts carrying `text`. */
function contentText(content: unknown, out: string[]): void {
  if (typeof content === 'string') {
    out.push(content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const part of content) {
    if (typeof part === 'string') out.push(part);
    else if (isRecord(part) && typeof part.text === 'string') out.push(part.text);
  }
}

function userMessages(list: unknown, out: string[]): void {
  if (!Array.isArray(list)) return;
  for (const m of list) {
    if (!isRecord(m)) continue;
    if (m.role !== undefined && m.role !== 'user') continue;
    contentText(m.content, out);
    // Gemini: contents[].parts[].text
    contentText(m.parts, out);
  }
}

export function promptTextOf(body: unknown): string {
  if (!isRecord(body)) return '';
  const out: string[] = [];
  userMessages(body.messages, out);
  userMessages(body.contents, out);
  const prompt = body.prompt;
  if (typeof prompt === 'string') out.push(prompt);
  else if (Array.isArray(prompt)) for (const p of prompt) if (typeof p === 'string') out.push(p);
  const input = body.input;
  if (typeof input === 'string') out.push(input);
  else userMessages(input, out);
  return out.join('\n');
}
