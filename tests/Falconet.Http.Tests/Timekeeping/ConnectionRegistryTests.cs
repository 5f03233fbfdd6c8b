using System.Collections.Generic;
using System.Threading.Tasks;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Timekeeping;

/// <summary>The server's set of open connections and its limit.</summary>
public sealed class ConnectionRegistryTests
{
    private sealed class Connection
    {
        public long Requests { get; set; }
    }

    [Fact]
    public void It_refuses_a_connection_past_its_limit_and_takes_one_again_after_a_removal()
    {
        var registry = new ConnectionRegistry<Connection>(limit: 2);
        var first = new Connection();
        var second = new Connection();

        registry.TryAdd(first).ShouldBeTrue();
        registry.TryAdd(second).ShouldBeTrue();
        registry.TryAdd(new Connection()).ShouldBeFalse();
        registry.Count.ShouldBe(2);

        registry.Remove(first);
        registry.TryAdd(new Connection()).ShouldBeTrue();
        registry.Count.ShouldBe(2);
    }

    [Fact]
    public async Task Waiting_for_it_to_empty_completes_when_the_last_connection_leaves()
    {
        var registry = new ConnectionRegistry<Connection>();
        registry.WhenEmptyAsync().IsCompletedSuccessfully.ShouldBeTrue();

        var first = new Connection();
        var second = new Connection();
        registry.TryAdd(first);
        registry.TryAdd(second);
        Task empty = registry.WhenEmptyAsync();

        registry.Remove(first);
        empty.IsCompleted.ShouldBeFalse();
        registry.Remove(second);
        await empty.WaitAsync(System.TimeSpan.FromSeconds(5));

        // A later connection makes a new wait necessary.
        registry.TryAdd(new Connection());
        registry.WhenEmptyAsync().IsCompleted.ShouldBeFalse();
    }

    [Fact]
    public void It_visits_every_connection_once_and_a_snapshot_is_a_copy()
    {
        var registry = new ConnectionRegistry<Connection>();
        var all = new[] { new Connection(), new Connection(), new Connection() };
        foreach (Connection connection in all)
        {
            registry.TryAdd(connection);
        }

        var visited = new List<Connection>();
        registry.ForEach(visited, static (connection, list) => list.Add(connection));
        visited.ShouldBe(all, ignoreOrder: true);

        Connection[] snapshot = registry.Snapshot();
        registry.Remove(all[0]);
        snapshot.ShouldBe(all, ignoreOrder: true);
        registry.Count.ShouldBe(2);
    }

    [Fact]
    public void Sum_counts_open_connections_as_they_are_now_and_ended_ones_as_they_ended()
    {
        var registry = new ConnectionRegistry<Connection>();
        var first = new Connection { Requests = 3 };
        var second = new Connection { Requests = 5 };
        registry.TryAdd(first);
        registry.TryAdd(second);
        registry.Sum(static connection => connection.Requests).ShouldBe(8);

        second.Requests = 7;
        registry.Sum(static connection => connection.Requests).ShouldBe(10);

        // An ended connection counts once, with what it had at the end.
        registry.Remove(first, first.Requests);
        first.Requests = 100;
        registry.Sum(static connection => connection.Requests).ShouldBe(10);
        registry.Remove(second, second.Requests);
        registry.Sum(static connection => connection.Requests).ShouldBe(10);
    }
}
