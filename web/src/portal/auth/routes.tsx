import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { RootRoute } from '../../router';

/** The signed-out pages: sign in and up, and the pages behind mailed links. */
export function authRoutes(parent: RootRoute): AnyRoute[] {
  const page = (path: string, load: () => Promise<Record<string, unknown>>, name: string) => lazyPage(parent, path, load, name);
  return [
    page('/login', () => import('./LoginPage'), 'LoginPage'),
    page('/signup', () => import('./SignupPage'), 'SignupPage'),
    page('/complete-sign-up', () => import('./TokenPages'), 'CompleteSignUpPage'),
    page('/verify-email', () => import('./TokenPages'), 'VerifyEmailPage'),
    page('/forgot-password', () => import('./TokenPages'), 'ForgotPasswordPage'),
    page('/reset-password', () => import('./TokenPages'), 'ResetPasswordPage'),
    page('/invitations/accept', () => import('./TokenPages'), 'AcceptInvitationPage'),
  ];
}
