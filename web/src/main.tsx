// Entry point: mounts the app into #app (see index.html).
import { render } from 'preact';
import { App } from './app.tsx';

render(<App />, document.getElementById('app')!);
