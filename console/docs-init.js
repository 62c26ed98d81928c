// /docs: Swagger UI over the server's own /openapi.json, with nothing fetched from elsewhere
// (no validator badge, which would send the document to validator.swagger.io).
/* global window, SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
});
