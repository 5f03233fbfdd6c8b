using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Soak;

/// <summary>
/// Drives a server on loopback for a while with a profile of clients, then prints what it saw, one line per scenario.
/// <c>Falconet.Soak --port N --seconds S [--profile soak|valid|burst|large] [--seed N] [--tls]</c>; exits 1 when the server
/// answered anything unexpected. With <c>--tls</c> every connection speaks TLS (the server's certificate is not checked:
/// the soak's is self-signed; ALPN offers http/1.1), and the soak profile adds the TLS-only hostile kinds.
/// </summary>
internal static class Program
{
    public static async Task<int> Main(string[] args)
    {
        int port = 0;
        double seconds = 60;
        string profile = "soak";
        int seed = 1;
        bool tls = false;
        for (int i = 0; i < args.Length; i++)
        {
            string option = args[i];
            if (option == "--tls")
            {
                tls = true;
                continue;
            }

            if (++i == args.Length)
            {
                Console.Error.WriteLine($"{option} needs a value");
                return 2;
            }

            switch (option)
            {
                case "--port": port = int.Parse(args[i], CultureInfo.InvariantCulture); break;
                case "--seconds": seconds = double.Parse(args[i], CultureInfo.InvariantCulture); break;
                case "--profile": profile = args[i]; break;
                case "--seed": seed = int.Parse(args[i], CultureInfo.InvariantCulture); break;
                default: Console.Error.WriteLine($"unknown option {option}"); return 2;
            }
        }

        if (port == 0)
        {
            Console.Error.WriteLine("usage: Falconet.Soak --port N --seconds S [--profile soak|valid|burst|large] [--seed N] [--tls]");
            return 2;
        }

        var outcomes = new Outcomes();
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
        var scenarios = new Scenarios(new IPEndPoint(IPAddress.Loopback, port), tls, outcomes, stop.Token);

        // How many clients of each kind run at once.
        (Func<int, Task> Run, int Count)[] mix = profile switch
        {
            "soak" when tls => [(scenarios.ValidAsync, 32), (scenarios.InvalidAsync, 8), (scenarios.SlowAsync, 4), (scenarios.AbandonedAsync, 8), (scenarios.ResetAsync, 8), (scenarios.LargeBodyAsync, 4),
                (scenarios.TlsGarbageAsync, 2), (scenarios.TlsStalledHandshakeAsync, 4), (scenarios.TlsCutRecordAsync, 4), (scenarios.TlsCloseAsync, 4)],
            "soak" => [(scenarios.ValidAsync, 32), (scenarios.InvalidAsync, 8), (scenarios.SlowAsync, 4), (scenarios.AbandonedAsync, 8), (scenarios.ResetAsync, 8), (scenarios.LargeBodyAsync, 4)],
            "valid" => [(scenarios.ValidAsync, 64)],
            "burst" => [(scenarios.BurstAsync, 1_000)],
            "large" => [(scenarios.LargeBodyAsync, 64)],
            _ => throw new ArgumentException($"unknown profile {profile}"),
        };

        var clients = new List<Task>();
        foreach ((Func<int, Task> run, int count) in mix)
        {
            for (int i = 0; i < count; i++)
            {
                int clientSeed = (seed * 10_000) + clients.Count;
                clients.Add(Task.Run(() => run(clientSeed)));
            }
        }

        await Task.WhenAll(clients);
        Console.Write(outcomes.Report());
        return outcomes.Unexpected == 0 ? 0 : 1;
    }
}
