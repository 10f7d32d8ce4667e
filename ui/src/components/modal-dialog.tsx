import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

/**
 * A modal dialog on the native <dialog>: showModal() makes the page behind it
 * inert (focus stays inside), Escape closes it, and it is labelled by its title.
 * Mounted while open; on close focus goes back to what opened it.
 */
export function ModalDialog(props: {
  title: string;
  onClose(): void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const dialog = ref.current!;
    dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class="modal"
      aria-labelledby={titleId}
      onCancel={(e) => {
        // Escape: the parent unmounts the dialog, which closes it and gives focus back.
        e.preventDefault();
        props.onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
      <button type="button" class="modal-close" onClick={props.onClose}>
        Close
      </button>
    </dialog>
  );
}
