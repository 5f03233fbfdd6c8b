using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http.Http1;

// Switching protocols (RFC 9110 section 7.8): after the handler's 101, the connection stops reading HTTP and its bytes,
// those already received included, belong to an opaque stream until the handler returns.
internal sealed partial class HttpConnection
{
    private Http1UpgradedStream? _upgradedStream;
    private bool _upgraded;

    /// <summary>
    /// True when the request asks to switch protocols and the handler can still accept: HTTP/1.1 with an Upgrade header and
    /// the "upgrade" token in Connection, no request body, the response not started, the server not stopping.
    /// </summary>
    public bool CanUpgrade =>
        !_upgraded
        && _request.Version == KnownVersion.Http11
        && _request.BodyKind == RequestBodyKind.None
        && !_response.HasStarted
        && _response.KeepAlive
        && !_settings.Shutdown.IsCancellationRequested
        && _requestHeaders.Upgrade.Count != 0
        && HttpConnectionTokens.ContainsToken(_requestHeaders.Connection, "upgrade");

    /// <summary>
    /// Sends 101 Switching Protocols with the response headers the handler set and returns the connection as an opaque
    /// stream. The connection closes once the handler returns.
    /// </summary>
    public ValueTask<Stream> UpgradeAsync(CancellationToken cancellationToken)
    {
        if (!CanUpgrade)
        {
            throw new InvalidOperationException(_upgraded
                ? "The connection has already switched protocols."
                : "This request cannot switch protocols: it must be HTTP/1.1 with Upgrade and 'Connection: upgrade', have no body, and come before the response started (CanUpgrade).");
        }

        if (_response.Headers.Upgrade.Count == 0)
        {
            // RFC 9110 section 7.8: a 101 names the protocol the connection switches to.
            throw new InvalidOperationException("Set the Upgrade response header to the protocol the connection switches to before upgrading.");
        }

        _response.StartSwitchingProtocols();
        _upgraded = true;
        Http1UpgradedStream stream = _upgradedStream ??= new Http1UpgradedStream(_input, _output);

        // Sent now, with any response of a request pipelined before it: the client waits for the 101.
        ValueTask sent = _output.FlushAsync(cancellationToken);
        return sent.IsCompletedSuccessfully ? new ValueTask<Stream>(stream) : AwaitSentAsync(sent, stream);

        static async ValueTask<Stream> AwaitSentAsync(ValueTask sent, Stream stream)
        {
            await sent.ConfigureAwait(false);
            return stream;
        }
    }
}
