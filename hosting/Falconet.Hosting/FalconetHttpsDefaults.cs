using System;
using Falconet.Server;
using Microsoft.Extensions.Logging;

namespace Falconet.Hosting;

/// <summary>
/// The HTTPS defaults: TLS settings (a named <see cref="TlsServerOptions"/>) for https addresses given without their own, such
/// as ASP.NET Core's <c>--urls https://...</c>, whose certificate also serves any HTTPS endpoint configured without one. They
/// come from configuration ("Certificates:Default", "EndpointDefaults"), then from code
/// (<see cref="FalconetServiceCollectionExtensions.ConfigureFalconetHttpsDefaults"/>); without a certificate there, the ASP.NET
/// Core development certificate serves where one is installed.
/// </summary>
public static class FalconetHttpsDefaults
{
    /// <summary>The name of the <see cref="TlsServerOptions"/> that hold the defaults (<c>IOptionsMonitor&lt;TlsServerOptions&gt;.Get</c>).</summary>
    public const string OptionsName = "Falconet.HttpsDefaults";

    /// <summary>
    /// Gives every HTTPS endpoint of <paramref name="options"/> that has neither a certificate nor a selector the certificate
    /// (or selector) of <paramref name="defaults"/>, or else the development certificate (logged).
    /// </summary>
    /// <exception cref="InvalidOperationException">An HTTPS endpoint is left without a certificate; the message names it and says how to give one.</exception>
    public static void CompleteCertificates(FalconetServerOptions options, TlsServerOptions defaults, ILogger logger)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(defaults);
        ArgumentNullException.ThrowIfNull(logger);
        System.Security.Cryptography.X509Certificates.X509Certificate2? development = null;
        foreach (HttpsEndpoint endpoint in options.HttpsEndpoints)
        {
            TlsServerOptions tls = endpoint.Tls;
            if (tls.ServerCertificate is not null || tls.ServerCertificateSelector is not null)
            {
                continue;
            }

            if (defaults.ServerCertificate is not null || defaults.ServerCertificateSelector is not null)
            {
                tls.ServerCertificate = defaults.ServerCertificate;
                tls.ServerCertificateSelector = defaults.ServerCertificateSelector;
                continue;
            }

            development ??= CertificateLoader.FindDevelopmentCertificate()
                ?? throw new InvalidOperationException(
                    $"Falconet cannot serve {ListenAddress.Format(endpoint.EndPoint, https: true)}: no server certificate was given for it, and there is no ASP.NET Core "
                    + "development certificate. Give the endpoint a \"Certificate\" in the \"Falconet\" configuration section, or a default one "
                    + "(\"Falconet:Certificates:Default\", or ConfigureFalconetHttpsDefaults in code), or make the development certificate "
                    + "with 'dotnet dev-certs https'.");
            HostingLog.UsingDevelopmentCertificate(logger, ListenAddress.Format(endpoint.EndPoint, https: true), development.Subject, development.Thumbprint);
            tls.ServerCertificate = development;
        }
    }

}

/// <summary>The log messages of the hosting integration (event ids 550-569).</summary>
internal static partial class HostingLog
{
    [LoggerMessage(EventId = 550, Level = LogLevel.Information, Message = "{Endpoint} uses the ASP.NET Core development certificate {Subject} (thumbprint {Thumbprint}).")]
    public static partial void UsingDevelopmentCertificate(ILogger logger, string endpoint, string subject, string thumbprint);
}
