import { Alert, Anchor, Button, Stack, Text, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { AuthFrame } from './AuthFrame';
import { fieldError, formError } from './form-errors';

const FIELDS = ['name', 'email', 'organizationName'] as const;

/**
 * A new account and a new organization, in two steps: this form mails a link, and the link's page
 * (CompleteSignUpPage) takes the password. The server answers the same whether or not the address
 * has an account, so this page says the same too: check your email.
 */
export function SignupPage() {
  const [form, setForm] = useState({ name: '', email: '', organizationName: '' });
  const set = (key: keyof typeof form) => (event: { currentTarget: { value: string } }) => setForm({ ...form, [key]: event.currentTarget.value });
  const signUp = useMutation({ mutationFn: () => unwrap(api.POST('/api/auth/sign-up', { body: form }), { redirectOn401: false }) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signUp.mutate();
  };
  const error = (field: (typeof FIELDS)[number]) => fieldError(signUp.error, field);
  const general = formError(signUp.error, FIELDS);
  if (signUp.isSuccess && signUp.data.delivery === 'kept') {
    // No mail server on this Vouch: the message waits for whoever runs it.
    return (
      <AuthFrame title="Ask for your link" footer={<Anchor href="/login">Back to sign in</Anchor>}>
        <Stack>
          <Alert color="orange" title="This Vouch server sends no email" role="status">
            It has no mail server set up (SMTP_URL), so the message for {form.email} was kept on the server instead of sent. Whoever runs this server can read it, with its link to
            choose your password, by running <code>npx vouch mail list</code> beside it. Open the link within 24 hours.
          </Alert>
          <Text size="sm" c="dimmed">
            Running Vouch yourself? Run <code>npx vouch mail list</code> in the folder you started it from (it works while the server runs), or set SMTP_URL to send mail.
          </Text>
        </Stack>
      </AuthFrame>
    );
  }
  if (signUp.isSuccess) {
    return (
      <AuthFrame title="Check your email" footer={<Anchor href="/login">Back to sign in</Anchor>}>
        <Stack>
          <Alert color="teal" title="Check your email to continue" role="status">
            We sent a message to {form.email}. Open its link within 24 hours to choose your password and finish.
          </Alert>
          <Text size="sm" c="dimmed">
            No message after a few minutes? Look in your spam folder. If the address already has a Vouch account, the message says how to sign in instead.
          </Text>
        </Stack>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame
      title="Create your Vouch account"
      subtitle="Start in the sandbox at once; ask for live access when you are ready."
      footer={
        <>
          Already have an account? <Anchor href="/login">Sign in</Anchor>
        </>
      }
    >
      <form onSubmit={submit} noValidate>
        <Stack>
          {general && (
            <Alert color="red" role="alert" title="Could not create the account">
              {general}
            </Alert>
          )}
          <TextInput label="Your name" autoComplete="name" value={form.name} onChange={set('name')} error={error('name')} required />
          <TextInput
            label="Work email"
            description="We mail you a link to finish: you choose your password there"
            type="email"
            autoComplete="email"
            value={form.email}
            onChange={set('email')}
            error={error('email')}
            required
          />
          <TextInput label="Company name" autoComplete="organization" value={form.organizationName} onChange={set('organizationName')} error={error('organizationName')} required />
          <Button type="submit" loading={signUp.isPending} fullWidth>
            Create account
          </Button>
        </Stack>
      </form>
    </AuthFrame>
  );
}
