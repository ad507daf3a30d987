// The error hierarchy: each class carries its HTTP status, so the one error middleware maps any thrown
// error to a response without knowing where it came from. `extra` adds spec-named fields to the body.

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message = 'Invalid request', extra?: Record<string, unknown>) {
    super(400, message, extra);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'Authentication required') {
    super(401, message);
  }
}
export class ForbiddenError extends AppError {
  constructor(message = 'Forbidden', extra?: Record<string, unknown>) {
    super(403, message, extra);
  }
}
export class NotFoundError extends AppError {
  constructor(message = 'Not found') {
    super(404, message);
  }
}
export class ConflictError extends AppError {
  constructor(message = 'Conflict') {
    super(409, message);
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(message = 'Request body too large') {
    super(413, message);
  }
}
export class TooManyRequestsError extends AppError {
  constructor(message = 'Too many requests', extra?: Record<string, unknown>) {
    super(429, message, extra);
  }
}
export class NotImplementedError extends AppError {
  constructor(message = 'Not implemented') {
    super(501, message);
  }
}
export class ServiceUnavailableError extends AppError {
  /** `retryAfterSeconds`: when the dependency is expected back; sent as the Retry-After header. */
  constructor(
    message = 'Service unavailable',
    readonly retryAfterSeconds?: number,
  ) {
    super(503, message);
  }
}
