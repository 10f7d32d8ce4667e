/** Every API route but health, metrics and the OpenAPI document lives under this prefix. */
export const API_PREFIX = '/api/v1beta1';
