// Button: a real <button> (keyboard and screen readers for free). `busy` disables it and says so.
import type { ButtonHTMLAttributes } from 'preact';

type Props = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'type' | 'disabled'> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'link';
  busy?: boolean;
  type?: 'button' | 'submit' | 'reset';
  disabled?: boolean;
};

export function Button({ variant = 'secondary', busy, disabled, type = 'button', children, ...rest }: Props) {
  return (
    <button
      {...rest}
      type={type}
      class={`btn btn-${variant}${rest.class ? ` ${rest.class}` : ''}`}
      disabled={disabled || busy}
      aria-busy={busy ? 'true' : undefined}
    >
      {children}
    </button>
  );
}
