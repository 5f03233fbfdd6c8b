using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Http.Features;

namespace Falconet.AspNetCore;

/// <summary>
/// Switching protocols for the application (WebSockets through <c>app.UseWebSockets()</c>): <see cref="IHttpUpgradeFeature"/>
/// over Falconet's <see cref="Falconet.Http.HttpContext.UpgradeAsync"/>. <see cref="IHttpExtendedConnectFeature"/> is there as
/// on Kestrel's HTTP/1.1 connections, and says no: extended CONNECT (RFC 8441) is an HTTP/2 request.
/// </summary>
internal sealed partial class ConnectionFeatures<TContext> : IHttpUpgradeFeature, IHttpExtendedConnectFeature
{
    // IHttpUpgradeFeature

    public bool IsUpgradableRequest => _context.CanUpgrade;

    /// <summary>
    /// Runs the OnStarting callbacks, then sends 101 Switching Protocols with the response headers (the application sets
    /// Upgrade, as the WebSocket middleware does) and returns the connection as an opaque stream.
    /// </summary>
    public async Task<Stream> UpgradeAsync()
    {
        if (!_context.CanUpgrade)
        {
            throw new InvalidOperationException("This request cannot be upgraded: check IHttpUpgradeFeature.IsUpgradableRequest first.");
        }

        await StartAsync().ConfigureAwait(false);
        return await _context.UpgradeAsync().ConfigureAwait(false);
    }

    // IHttpExtendedConnectFeature

    bool IHttpExtendedConnectFeature.IsExtendedConnect => false;

    string? IHttpExtendedConnectFeature.Protocol => null;

    ValueTask<Stream> IHttpExtendedConnectFeature.AcceptAsync()
        => throw new InvalidOperationException("This is not an extended CONNECT request (an HTTP/2 request, RFC 8441).");
}
