import nodemailer from 'nodemailer';

export interface Mail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
}

/** Where respondent emails go. SMTP in production; tests may pass their own. */
export interface MailTransport {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * An SMTP transport from an `smtp://` or `smtps://` URL (user, password, host, port; query
 * options as nodemailer reads them). Timeouts are short: a create request never waits for
 * mail (sending happens after the response), but a hung server must not pile up connections.
 */
export function smtpTransport(url: string): MailTransport {
  const transporter = nodemailer.createTransport({
    url,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return {
    async send(mail) {
      await transporter.sendMail(mail);
    },
    close() {
      transporter.close();
    },
  };
}
