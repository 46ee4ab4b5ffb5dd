// Spectral's oas3-operation-security-defined, as OpenAPI 3.1 reads a security requirement: the
// scheme must be defined; an oauth2 requirement's scopes must be listed in its flows; and, new in
// 3.1, any other scheme's list holds role names "not otherwise defined" by the document, which the
// built-in rule refuses as if they were OAuth scopes (its known false positive on 3.1 documents).
// Our API keys are bearer tokens with scopes, so this rule checks those names against the scheme's
// own description, which must name each one in backquotes: a scope an operation asks for is always
// one the reader can look up.
export default function oas31SecurityDefined(requirement, _options, context) {
  const document = context.document.data;
  const schemes = document?.components?.securitySchemes ?? {};
  const results = [];
  for (const [name, roles] of Object.entries(requirement ?? {})) {
    const scheme = schemes[name];
    if (scheme === undefined) {
      results.push({
        message: `"security" values must match a scheme defined in the "components.securitySchemes" object.`,
        path: [...context.path, name],
      });
      continue;
    }
    (Array.isArray(roles) ? roles : []).forEach((role, i) => {
      const listed =
        scheme.type === 'oauth2'
          ? Object.values(scheme.flows ?? {}).some((flow) => flow && typeof flow.scopes === 'object' && role in flow.scopes)
          : scheme.type === 'openIdConnect' || (typeof scheme.description === 'string' && scheme.description.includes(`\`${role}\``));
      if (!listed) results.push({ message: `"${role}" must be listed among the scopes of "${name}".`, path: [...context.path, name, i] });
    });
  }
  return results;
}
