using System;
using System.Collections.Generic;
using System.Threading;
using Falconet.Server;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace Falconet.Hosting;

/// <summary>Checks the options when the host starts and says, per option, what is wrong and what is allowed.</summary>
internal sealed class FalconetOptionsValidator(IOptions<HostOptions>? hostOptions = null) : IValidateOptions<FalconetServerOptions>
{
    private const string Section = FalconetServiceCollectionExtensions.ConfigurationSection;

    public ValidateOptionsResult Validate(string? name, FalconetServerOptions options)
    {
        var errors = new List<string>();
        if (options.Endpoints.Count == 0 && options.HttpsEndpoints.Count == 0)
        {
            errors.Add($"{Section}:Endpoints is empty: add at least one, such as \"http://127.0.0.1:8080\".");
        }

        if (options.Limits is null)
        {
            errors.Add($"{Section}:Limits must not be null.");
        }
        else
        {
            Positive(errors, "Limits:MaxRequestLineSize", options.Limits.MaxRequestLineSize);
            Positive(errors, "Limits:MaxRequestHeadersSize", options.Limits.MaxRequestHeadersSize);
            Positive(errors, "Limits:MaxRequestHeaderCount", options.Limits.MaxRequestHeaderCount);
            NotNegative(errors, "Limits:MaxRequestBodySize", options.Limits.MaxRequestBodySize);
            NotNegative(errors, "Limits:MaxChunkExtensionSize", options.Limits.MaxChunkExtensionSize);
        }

        Positive(errors, "OutputBufferLimit", options.OutputBufferLimit);
        NotNegative(errors, "MaxRequestBodyDrainSize", options.MaxRequestBodyDrainSize);
        Positive(errors, "IoThreadCount", options.IoThreadCount);
        if (options.ShutdownTimeout < TimeSpan.Zero)
        {
            errors.Add($"{Section}:ShutdownTimeout is {options.ShutdownTimeout}: it must be zero or more.");
        }

        if (options.DrainDelay < TimeSpan.Zero)
        {
            errors.Add($"{Section}:DrainDelay is {options.DrainDelay}: it must be zero or more.");
        }
        else
        {
            HostShutdown(errors, options, hostOptions?.Value.ShutdownTimeout);
        }

        Timeout(errors, "KeepAliveTimeout", options.KeepAliveTimeout);
        Timeout(errors, "RequestHeadersTimeout", options.RequestHeadersTimeout);
        if (options.Transport is { } transport && !Enum.IsDefined(transport))
        {
            errors.Add($"{Section}:Transport is {transport}: use {string.Join(" or ", Enum.GetNames<TransportKind>())}.");
        }

        return errors.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(errors);
    }

    // The host cancels its services' stop after its own shutdown timeout; the drain delay comes first and must leave in-flight
    // requests time to finish inside it.
    private static void HostShutdown(List<string> errors, FalconetServerOptions options, TimeSpan? hostTimeout)
    {
        if (hostTimeout is not { } host || host == System.Threading.Timeout.InfiniteTimeSpan)
        {
            return;
        }

        if (FalconetHostedService.AdoptsHostShutdownTimeout(options, host))
        {
            if (options.DrainDelay >= host)
            {
                errors.Add($"{Section}:DrainDelay is {options.DrainDelay}, and the host's ShutdownTimeout is {host}: the host would end the stop "
                    + "before in-flight requests get any time to finish. Raise HostOptions.ShutdownTimeout above the drain delay by the time "
                    + "requests need, or lower DrainDelay.");
            }
        }
        else if (options.DrainDelay + options.ShutdownTimeout > host)
        {
            errors.Add($"{Section}:DrainDelay ({options.DrainDelay}) plus {Section}:ShutdownTimeout ({options.ShutdownTimeout}) is more than the host's "
                + $"ShutdownTimeout ({host}): the host would cut in-flight requests short. Raise HostOptions.ShutdownTimeout to at least "
                + $"{options.DrainDelay + options.ShutdownTimeout}, or lower one of them.");
        }
    }

    private static void Positive(List<string> errors, string key, long value)
    {
        if (value <= 0)
        {
            errors.Add($"{Section}:{key} is {value}: it must be more than 0.");
        }
    }

    private static void NotNegative(List<string> errors, string key, long value)
    {
        if (value < 0)
        {
            errors.Add($"{Section}:{key} is {value}: it must be 0 or more.");
        }
    }

    private static void Timeout(List<string> errors, string key, TimeSpan value)
    {
        if (value <= TimeSpan.Zero && value != System.Threading.Timeout.InfiniteTimeSpan)
        {
            errors.Add($"{Section}:{key} is {value}: it must be positive, or \"{System.Threading.Timeout.InfiniteTimeSpan}\" for none.");
        }
    }
}
