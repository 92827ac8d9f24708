"""factory_boy factories for the raterapp models."""

import factory
from django.contrib.auth.models import Group, User

from raterapp.models import Experiment


class UserFactory(factory.django.DjangoModelFactory):
    """A user; ``UserFactory(roles=["engineer"])`` puts them in those role groups."""

    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        for role in extracted or ():
            self.groups.add(Group.objects.get_or_create(name=role)[0])


class ExperimentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Experiment
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"experiment {n}")
    owner = factory.SubFactory(UserFactory, roles=["engineer"])
    seed = 7

    @factory.post_generation
    def budget(self, create, extracted, **kwargs):
        """Every experiment has its budget row, as ``experiment_create`` makes it."""
        if create:
            from raterapp.services.experiments.budgets import budget_create

            budget_create(experiment=self)


def make_raters(n):
    return UserFactory.create_batch(n, roles=["rater"])
