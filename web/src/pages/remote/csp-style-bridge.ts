// xterm.js (its DOM renderer and scrollbar) writes CSS into `<style>` elements it creates with
// document.createElement('style'), which the app's strict CSP (`style-src 'self'`, no inline styles)
// blocks, leaving the terminal without its theme and row metrics. While a terminal page is open, this
// bridge hands xterm an inert stand-in (a <template>, which renders nothing) whose `textContent` goes
// into a constructable stylesheet adopted by the document: constructed sheets are not inline styles,
// so the CSP stays strict and the terminal gets its CSS. Only `style` elements are redirected, only on
// this document, and `uninstall()` restores the original createElement and drops the sheets.

export function installCspStyleBridge(doc: Document): () => void {
  const original = doc.createElement;
  const sheets = new Set<CSSStyleSheet>();
  const adopt = (sheet: CSSStyleSheet) => {
    if (!doc.adoptedStyleSheets.includes(sheet)) doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  };
  const drop = (sheet: CSSStyleSheet) => {
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
    sheets.delete(sheet);
  };
  const bridged = function (this: Document, tagName: string, options?: ElementCreationOptions) {
    if (String(tagName).toLowerCase() !== 'style') return original.call(this, tagName, options);
    const stand = original.call(this, 'template') as HTMLTemplateElement;
    const sheet = new CSSStyleSheet();
    sheets.add(sheet);
    let text = '';
    Object.defineProperty(stand, 'textContent', {
      configurable: true,
      get: () => text,
      set: (v: string | null) => {
        text = v ?? '';
        sheet.replaceSync(text);
        adopt(sheet);
      },
    });
    const remove = stand.remove.bind(stand);
    stand.remove = () => {
      drop(sheet);
      remove();
    };
    return stand;
  } as typeof doc.createElement;
  doc.createElement = bridged;
  return () => {
    if (doc.createElement === bridged) doc.createElement = original;
    for (const s of [...sheets]) drop(s);
  };
}
