"""Match leases: the runner that plays a running match (`owner`) and its last heartbeat.

A second runner of the same league replays a running match only when its owner's heartbeat is
older than the lease; rows from before this revision have no heartbeat and count as expired.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 14:35:00
"""

from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op


revision: str = '0002'
down_revision: Union[str, None] = '0001'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('matches') as batch_op:
        batch_op.add_column(sa.Column('owner', sa.String(length=200), server_default='', nullable=False))
        batch_op.add_column(sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('matches') as batch_op:
        batch_op.drop_column('heartbeat_at')
        batch_op.drop_column('owner')
