using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using Falconet.Server;
using Falconet.Transport.Tls.OpenSsl;

namespace Falconet.Transport.Tls;

/// <summary>
/// The TLS settings of one started HTTPS endpoint: SslStream options prepared once per certificate (chain built,
/// ALPN, protocols, client-certificate policy) and picked per handshake from the ClientHello; or, for the OpenSSL engine,
/// its contexts (<see cref="OpenSsl"/>). <see cref="TlsEngine.Auto"/> is resolved here, once per endpoint (<see cref="Engine"/>).
/// </summary>
internal sealed class TlsServerSettings
{
    private readonly TlsServerOptions _options;
    private readonly SslServerAuthenticationOptions? _fixed;
    private readonly ConcurrentDictionary<X509Certificate2, SslServerAuthenticationOptions>? _selected;
    private readonly RemoteCertificateValidationCallback? _validateClient;
    private readonly List<SslApplicationProtocol>? _applicationProtocols;

    public TlsServerSettings(TlsServerOptions options, TimeProvider clock)
    {
        options.Validate();
        _options = options;
        _applicationProtocols = options.ApplicationProtocols.Count == 0 ? null : new List<SslApplicationProtocol>(options.ApplicationProtocols);
        HandshakeTimeout = (long)(options.HandshakeTimeout.TotalSeconds * clock.TimestampFrequency);
        if (options.ClientCertificateMode != ClientCertificateMode.NoCertificate)
        {
            _validateClient = ValidateClientCertificate;
        }

        if (options.Engine == TlsEngine.OpenSsl)
        {
            OpenSsl = new OpenSslServerContext(options, options.ApplicationProtocols);
        }
        else if (options.Engine == TlsEngine.Auto)
        {
            (OpenSsl, AutoFallbackReason) = TryOpenSsl(options);
        }

        Engine = OpenSsl is null ? TlsEngine.SslStream : TlsEngine.OpenSsl;
        if (OpenSsl is null && options.ServerCertificateSelector is null)
        {
            _fixed = Prepare(options.ServerCertificate!);
        }
        else if (OpenSsl is null)
        {
            _selected = new ConcurrentDictionary<X509Certificate2, SslServerAuthenticationOptions>(ReferenceEqualityComparer.Instance);
        }
    }

    /// <summary>The engine the endpoint runs: <see cref="TlsServerOptions.Engine"/>, or what <see cref="TlsEngine.Auto"/> chose.</summary>
    public TlsEngine Engine { get; }

    /// <summary>Whether the engine was chosen by <see cref="TlsEngine.Auto"/>.</summary>
    public bool ChosenAutomatically => _options.Engine == TlsEngine.Auto;

    /// <summary>Why <see cref="TlsEngine.Auto"/> chose SslStream rather than OpenSSL; null when it chose OpenSSL or the engine was named.</summary>
    public string? AutoFallbackReason { get; }

    /// <summary>The OpenSSL contexts when the endpoint runs the OpenSSL engine (<see cref="TlsServerOptions.Engine"/>); null for SslStream.</summary>
    public OpenSslServerContext? OpenSsl { get; }

    /// <summary>The handshake timeout in timestamp ticks of the server's clock.</summary>
    public long HandshakeTimeout { get; }

    /// <summary>The bound on a connection's encrypted bytes not taken by the socket yet (<see cref="TlsServerOptions.MaxBytesInFlight"/>).</summary>
    public int MaxBytesInFlight => _options.MaxBytesInFlight;

    /// <summary>The SslStream callback: options for the host name of the ClientHello; the state is the <see cref="TlsHandshake"/>.</summary>
    public static readonly ServerOptionsSelectionCallback SelectOptions = static (_, hello, state, _) =>
        ValueTask.FromResult(((TlsHandshake)state!).SelectOptions(hello.ServerName));

    /// <summary>
    /// What <see cref="TlsEngine.Auto"/> runs: the OpenSSL contexts when the engine can run here and honour every option, built
    /// with the same checks as for <see cref="TlsEngine.OpenSsl"/>; otherwise none (SslStream) and why.
    /// </summary>
    private static (OpenSslServerContext? Context, string? WhyNot) TryOpenSsl(TlsServerOptions options)
    {
        string? whyNot = options.OpenSslUnavailableReason ?? OpenSslSupport.SwitchedOffReason ?? OpenSslSupport.UnavailableReason;
        if (whyNot is null && options.ServerCertificateSelector is not null)
        {
            // Its certificates are known only per handshake, too late to fall back if OpenSSL cannot use one (a key that
            // cannot be exported): SslStream serves whatever it returns, as it did before Auto.
            whyNot = "a ServerCertificateSelector picks the certificate per handshake, so whether OpenSSL can use it is not known at start " +
                "(set TlsServerOptions.Engine to OpenSsl to run the OpenSSL engine with it)";
        }

        if (whyNot is not null)
        {
            return (null, whyNot);
        }

        try
        {
            return (new OpenSslServerContext(options, options.ApplicationProtocols), null);
        }
        catch (InvalidOperationException exception)
        {
            // An option OpenSSL cannot honour (a protocol set, a certificate or key it cannot take): named in the message.
            return (null, exception.Message);
        }
    }

    /// <summary>The options for a client that asked for <paramref name="hostName"/>; null when no certificate serves it.</summary>
    public SslServerAuthenticationOptions? For(string? hostName)
    {
        if (_fixed is not null)
        {
            return _fixed;
        }

        X509Certificate2? certificate = _options.ServerCertificateSelector!(string.IsNullOrEmpty(hostName) ? null : hostName);
        if (certificate is null)
        {
            return null;
        }

        if (!certificate.HasPrivateKey)
        {
            throw new AuthenticationException($"The certificate selected for '{hostName}' has no private key.");
        }

        return _selected!.GetOrAdd(certificate, Prepare);
    }

    private SslServerAuthenticationOptions Prepare(X509Certificate2 certificate) => new()
    {
        // Built once: no chain building per handshake.
        ServerCertificateContext = SslStreamCertificateContext.Create(certificate, additionalCertificates: null, offline: true),
        EnabledSslProtocols = _options.EnabledProtocols,
        ApplicationProtocols = _applicationProtocols,
        ClientCertificateRequired = _options.ClientCertificateMode != ClientCertificateMode.NoCertificate,
        RemoteCertificateValidationCallback = _validateClient,
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,

        // Client-initiated renegotiation is a known denial-of-service lever, and HTTP/1.1 over TLS never needs it.
        AllowRenegotiation = false,
    };

    private bool ValidateClientCertificate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        bool accepted;
        if (certificate is null)
        {
            accepted = _options.ClientCertificateMode == ClientCertificateMode.AllowCertificate;
        }
        else
        {
            X509Certificate2 client = TlsConnection.AsCertificate2(certificate)!;
            accepted = _options.ClientCertificateValidation is { } validate
                ? validate(client, chain, errors)
                : errors == SslPolicyErrors.None;
        }

        if (!accepted)
        {
            TlsConnection.OnClientCertificateRejected(sender);
        }

        return accepted;
    }
}
