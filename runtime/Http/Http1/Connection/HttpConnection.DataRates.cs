using Falconet.Server;

namespace Falconet.Http.Http1;

// The minimum data rates of the current request (RequestDataRates).
internal sealed partial class HttpConnection
{
    private RequestDataRates _requestRates;

    public MinDataRate? MinRequestBodyDataRate
    {
        get => _requestRates.RequestBody(_settings);
        set => _requestRates.Set(value, MinResponseDataRate, _settings, _rates);
    }

    public MinDataRate? MinResponseDataRate
    {
        get => _requestRates.Response(_settings);
        set => _requestRates.Set(MinRequestBodyDataRate, value, _settings, _rates);
    }

    /// <summary>A new request starts with the server's rates.</summary>
    private void RestoreDataRates() => _requestRates.Restore(_rates);
}
