namespace Falconet.Server;

/// <summary>Whether an HTTPS endpoint asks clients for a certificate, and whether it insists on one.</summary>
public enum ClientCertificateMode
{
    /// <summary>The server does not ask for a client certificate.</summary>
    NoCertificate = 0,

    /// <summary>The server asks; a client without a certificate is served, one with a certificate must pass validation.</summary>
    AllowCertificate = 1,

    /// <summary>The server asks and refuses the handshake of a client without a valid certificate.</summary>
    RequireCertificate = 2,
}
